alphabet {"a"}
alphabet {"b"}
D = "a"
