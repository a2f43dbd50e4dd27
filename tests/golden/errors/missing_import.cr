C = #[pred] "a"
D = C > 0
