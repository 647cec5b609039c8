module benchgym/executor

go 1.22
