// Strings over {a, b} containing the factor ab: a local guard looks one position back
// (Huang et al., arXiv 2410.02140).

Follows_a = #[i - j == 1] "a" >= 1
Ends_ab = "b" && Follows_a
L = #Ends_ab >= 1
