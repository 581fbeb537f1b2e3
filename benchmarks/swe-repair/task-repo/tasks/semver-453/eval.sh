#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- tests/test_compare.py tests/test_subclass.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/tests/test_subclass.py b/tests/test_subclass.py
index a8c7d8c..0d39000 100644
--- a/tests/test_subclass.py
+++ b/tests/test_subclass.py
@@ -53,3 +53,19 @@ def test_replace_from_subclass():
 
     assert str(dev_version) == "v1.1.0-dev.0"
 
+
+def test_compare_with_subclass():
+    class SemVerSubclass(Version):
+        pass
+
+    with pytest.raises(TypeError):
+        SemVerSubclass.parse("1.0.0").compare(Version.parse("1.0.0"))
+    assert Version.parse("1.0.0").compare(SemVerSubclass.parse("1.0.0")) == 0
+
+    assert (
+        SemVerSubclass.parse("1.0.0").__eq__(Version.parse("1.0.0")) is NotImplemented
+    )
+    assert Version.parse("1.0.0").__eq__(SemVerSubclass.parse("1.0.0")) is True
+
+    assert SemVerSubclass.parse("1.0.0") == Version.parse("1.0.0")
+    assert Version.parse("1.0.0") == SemVerSubclass.parse("1.0.0")
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider tests/test_compare.py tests/test_subclass.py
: '>>>>> End Test Output'
git checkout HEAD -- tests/test_compare.py tests/test_subclass.py
