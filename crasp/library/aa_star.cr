// (aa)*: an even number of a's and nothing else, with a periodic predicate
// (Huang et al., arXiv 2410.02140). Correct at every position offset: the parity of the
// length is read against the parity of the first position, not the absolute position.

alphabet {"a", "b"}

All_a = #!"a" == 0
First = #true == 1
Start_even = #(First && i mod 2 in {0}) == 1
Here_even = i mod 2 in {0}

// The length is even iff the first and the last position differ in parity.
Even_length = Here_even && !Start_even || !Here_even && Start_even
L = All_a && Even_length
