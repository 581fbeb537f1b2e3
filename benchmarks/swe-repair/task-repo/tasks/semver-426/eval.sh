#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- tests/test_compare.py tests/test_subclass.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/tests/test_subclass.py b/tests/test_subclass.py
index a41e700..0d39000 100644
--- a/tests/test_subclass.py
+++ b/tests/test_subclass.py
@@ -20,6 +20,40 @@ def test_subclass_from_versioninfo():
     assert str(v) == "v1.2.3"
 
 
+def test_replace_from_subclass():
+    # Issue#426
+    # Taken from the example "Creating Subclasses from Version"
+    class SemVerWithVPrefix(Version):
+        """
+        A subclass of Version which allows a "v" prefix
+        """
+
+        @classmethod
+        def parse(cls, version: str) -> "SemVerWithVPrefix":
+            """
+            Parse version string to a Version instance.
+
+            :param version: version string with "v" or "V" prefix
+            :raises ValueError: when version does not start with "v" or "V"
+            :return: a new instance
+            """
+            if not version[0] in ("v", "V"):
+                raise ValueError(
+                    f"{version!r}: not a valid semantic version tag. "
+                    "Must start with 'v' or 'V'"
+                )
+            return super().parse(version[1:], optional_minor_and_patch=True)
+
+        def __str__(self) -> str:
+            # Reconstruct the tag
+            return "v" + super().__str__()
+
+    version = SemVerWithVPrefix.parse("v1.1.0")
+    dev_version = version.replace(prerelease="dev.0")
+
+    assert str(dev_version) == "v1.1.0-dev.0"
+
+
 def test_compare_with_subclass():
     class SemVerSubclass(Version):
         pass
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider tests/test_compare.py tests/test_subclass.py
: '>>>>> End Test Output'
git checkout HEAD -- tests/test_compare.py tests/test_subclass.py
