#!/bin/bash
set -uxo pipefail
cd /testbed
git checkout HEAD -- tests/test_more.py
git apply --verbose - <<'EOF_TEST_PATCH'
diff --git a/tests/test_more.py b/tests/test_more.py
index 381d40c..f4304eb 100644
--- a/tests/test_more.py
+++ b/tests/test_more.py
@@ -5459,6 +5459,11 @@ class LongestCommonPrefixTests(TestCase):
         iterables = [[1, 2], [1, 2, 3], [1, 2, 4], []]
         self.assertEqual(list(mi.longest_common_prefix(iterables)), [])
 
+    def test_non_hashable(self):
+        # See https://github.com/more-itertools/more-itertools/issues/603
+        iterables = [[[1], [2]], [[1], [2], [3]], [[1], [2], [4]]]
+        self.assertEqual(list(mi.longest_common_prefix(iterables)), [[1], [2]])
+
     def test_prefix_contains_elements_of_the_first_iterable(self):
         iterables = [[[1], [2]], [[1], [2], [3]], [[1], [2], [4]]]
         prefix = list(mi.longest_common_prefix(iterables))
EOF_TEST_PATCH
: '>>>>> Start Test Output'
python -m pytest -rA -p no:cacheprovider tests/test_more.py
: '>>>>> End Test Output'
git checkout HEAD -- tests/test_more.py
