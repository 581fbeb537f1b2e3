#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- test/test_regression.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/test/test_regression.py b/test/test_regression.py
index cb61c09..22e544a 100644
--- a/test/test_regression.py
+++ b/test/test_regression.py
@@ -393,6 +393,25 @@ def test_empty_table_with_keys_as_header():
     assert_equal(result, expected)
 
 
+def test_escape_empty_cell_in_first_column_in_rst():
+    "Regression: escape empty cells of the first column in RST format (issue #82)"
+    table = [["foo", 1], ["", 2], ["bar", 3]]
+    headers = ["", "val"]
+    expected = "\n".join(
+        [
+            "====  =====",
+            "..      val",
+            "====  =====",
+            "foo       1",
+            "..        2",
+            "bar       3",
+            "====  =====",
+        ]
+    )
+    result = tabulate(table, headers, tablefmt="rst")
+    assert_equal(result, expected)
+
+
 def test_ragged_rows():
     "Regression: allow rows with different number of columns (issue #85)"
     table = [[1, 2, 3], [1, 2], [1, 2, 3, 4]]
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider test/test_regression.py
: '>>>>> End Test Output'
git checkout HEAD -- test/test_regression.py
