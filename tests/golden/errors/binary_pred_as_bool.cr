#import pred
D = pred && "a"
