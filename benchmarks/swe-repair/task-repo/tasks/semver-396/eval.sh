#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- tests/test_compare.py tests/test_subclass.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/tests/test_subclass.py b/tests/test_subclass.py
index 792c270..0d39000 100644
--- a/tests/test_subclass.py
+++ b/tests/test_subclass.py
@@ -2,6 +2,24 @@ from semver import Version
 import pytest
 
 
+def test_subclass_from_versioninfo():
+    class SemVerWithVPrefix(Version):
+        @classmethod
+        def parse(cls, version):
+            if not version[0] in ("v", "V"):
+                raise ValueError(
+                    "{v!r}: version must start with 'v' or 'V'".format(v=version)
+                )
+            return super().parse(version[1:])
+
+        def __str__(self):
+            # Reconstruct the tag.
+            return "v" + super().__str__()
+
+    v = SemVerWithVPrefix.parse("v1.2.3")
+    assert str(v) == "v1.2.3"
+
+
 def test_replace_from_subclass():
     # Issue#426
     # Taken from the example "Creating Subclasses from Version"
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider tests/test_compare.py tests/test_subclass.py
: '>>>>> End Test Output'
git checkout HEAD -- tests/test_compare.py tests/test_subclass.py
