#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- tests/test_bump.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/tests/test_bump.py b/tests/test_bump.py
index 83579ce..34e0b2a 100644
--- a/tests/test_bump.py
+++ b/tests/test_bump.py
@@ -66,6 +66,18 @@ def test_should_versioninfo_bump_multiple():
     assert v.bump_prerelease().bump_build().bump_build().bump_prerelease() == expected
 
 
+def test_should_versioninfo_bump_prerelease_with_empty_str():
+    v = parse_version_info("3.4.5")
+    expected = parse_version_info("3.4.5-1")
+    assert v.bump_prerelease("") == expected
+
+
+def test_should_versioninfo_bump_prerelease_with_none():
+    v = parse_version_info("3.4.5")
+    expected = parse_version_info("3.4.5-rc.1")
+    assert v.bump_prerelease(None) == expected
+
+
 def test_should_versioninfo_bump_build_with_empty_str():
     v = parse_version_info("3.4.5")
     expected = parse_version_info("3.4.5+1")
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider tests/test_bump.py
: '>>>>> End Test Output'
git checkout HEAD -- tests/test_bump.py
