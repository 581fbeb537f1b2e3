#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- test/test_regression.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/test/test_regression.py b/test/test_regression.py
index 3416e3b..22e544a 100644
--- a/test/test_regression.py
+++ b/test/test_regression.py
@@ -455,3 +455,18 @@ def test_string_with_comma_between_digits_without_floatfmt_grouping_option():
     assert_equal(result, expected)  # no exception
 
 
+def test_iterable_row_index():
+    "Regression: accept 'infinite' row indices (github issue #175)"
+    table = [["a"], ["b"], ["c"]]
+
+    def count(start, step=1):
+        n = start
+        while True:
+            yield n
+            n += step
+            if n >= 10:  # safety valve
+                raise IndexError("consuming too many values from the count iterator")
+
+    expected = "1  a\n2  b\n3  c"
+    result = tabulate(table, showindex=count(1), tablefmt="plain")
+    assert_equal(result, expected)
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider test/test_regression.py
: '>>>>> End Test Output'
git checkout HEAD -- test/test_regression.py
