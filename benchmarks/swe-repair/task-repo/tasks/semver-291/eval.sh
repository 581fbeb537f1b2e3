#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- tests/test_semver.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/tests/test_semver.py b/tests/test_semver.py
index 211f6ac..9978b94 100644
--- a/tests/test_semver.py
+++ b/tests/test_semver.py
@@ -10,6 +10,20 @@ def test_should_private_increment_string(string, expected):
     assert Version._increment_string(string) == expected
 
 
+@pytest.mark.parametrize(
+    "ver",
+    [
+        {"major": -1},
+        {"major": 1, "minor": -2},
+        {"major": 1, "minor": 2, "patch": -3},
+        {"major": 1, "minor": -2, "patch": 3},
+    ],
+)
+def test_should_not_allow_negative_numbers(ver):
+    with pytest.raises(ValueError, match=".* is negative. .*"):
+        Version(**ver)
+
+
 def test_should_versioninfo_to_dict(version):
     resultdict = version.to_dict()
     assert isinstance(resultdict, dict), "Got type from to_dict"
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider tests/test_semver.py
: '>>>>> End Test Output'
git checkout HEAD -- tests/test_semver.py
