#import pos_prime
D = pos_prime
