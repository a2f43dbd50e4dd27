// a^n b^n c^n (n >= 1), from Yang & Chiang, "Counting Like Transformers" (arXiv 2404.04393).

// No b comes after a c, and no a after a b or c.
B_before_C = #("b" && #"c" == 0) == #"b"
A_before_BC = #("a" && #("b" || "c") == 0) == #"a"

Equal = #"a" == #"b" && #"b" == #"c" && #"a" >= 1
L = B_before_C && A_before_BC && Equal
