// (aa)*, written for the c-rasp interpreter: `pos_even` is true at 0-based even positions,
// i.e. 1-based odd ones, so an even length ends on a position where it is false.
// Assumes position offset 0.

#import pos_even

C_not_a = #!"a"
A = C_not_a == 0
D = !pos_even && A
