#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- tests/test_recipes.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/tests/test_recipes.py b/tests/test_recipes.py
index 8d25d38..63be394 100644
--- a/tests/test_recipes.py
+++ b/tests/test_recipes.py
@@ -395,6 +395,11 @@ class PartitionTests(TestCase):
         self.assertEqual(list(divisibles), [0, 3, 6, 9])
         self.assertEqual(list(remainders), [1, 2, 4, 5, 7, 8])
 
+    def test_pred_is_none(self):
+        falses, trues = mi.partition(None, range(3))
+        self.assertEqual(list(falses), [0])
+        self.assertEqual(list(trues), [1, 2])
+
 
 class PowersetTests(TestCase):
     """Tests for ``powerset()``"""
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider tests/test_recipes.py
: '>>>>> End Test Output'
git checkout HEAD -- tests/test_recipes.py
