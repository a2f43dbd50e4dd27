C = #[i - j in {-1, 2}] "a"
D = C > 0
