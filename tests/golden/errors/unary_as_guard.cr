#import pos_even
C = #[pos_even] "a"
D = C > 0
