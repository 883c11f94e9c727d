;; A loop that calls a leaf function: BenchmarkCallOverhead measures what
;; the stack accounting adds to a call.
(module
  (func $leaf (param i32) (result i32) (i32.add (local.get 0) (i32.const 1)))
  (func (export "run") (param $n i32) (result i32) (local $acc i32)
    (block $done (loop $l
      (br_if $done (i32.eqz (local.get $n)))
      (local.set $acc (call $leaf (local.get $acc)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $acc)))
