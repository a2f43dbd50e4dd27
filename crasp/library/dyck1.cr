// Dyck-1: balanced strings over ( and ).
// Program of Yang & Chiang, "Counting Like Transformers" (arXiv 2404.04393).

C_open = #"("
C_close = #")"

// Some prefix closed more brackets than it opened.
V = C_open < C_close
D = #V == 0 && C_open == C_close
