#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- test/test_regression.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/test/test_regression.py b/test/test_regression.py
index 2e256ac..22e544a 100644
--- a/test/test_regression.py
+++ b/test/test_regression.py
@@ -412,6 +412,14 @@ def test_escape_empty_cell_in_first_column_in_rst():
     assert_equal(result, expected)
 
 
+def test_ragged_rows():
+    "Regression: allow rows with different number of columns (issue #85)"
+    table = [[1, 2, 3], [1, 2], [1, 2, 3, 4]]
+    expected = "\n".join(["-  -  -  -", "1  2  3", "1  2", "1  2  3  4", "-  -  -  -"])
+    result = tabulate(table)
+    assert_equal(result, expected)
+
+
 def test_empty_pipe_table_with_columns():
     "Regression: allow empty pipe tables with columns, like empty dataframes (github issue #15)"
     table = []
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider test/test_regression.py
: '>>>>> End Test Output'
git checkout HEAD -- test/test_regression.py
