-- a table, then a mistake
CREATE TABLE t (a int);
CREATE TABLE u (b nosuchtype);
