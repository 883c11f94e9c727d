;; Guests that never return: a loop, and recursion that fans out without a
;; loop (2^60 calls, never deeper than 60 frames, so no stack budget stops
;; it). The stop flag must end both; meanwhile they return to Go (so that
;; the test's timers and garbage collection run) every YieldEvery
;; checkpoints.
(module
  (memory 1)
  (func (export "spin")
    (loop $l (br $l)))
  (func $fan (param $n i32)
    (if (local.get $n)
      (then
        (call $fan (i32.sub (local.get $n) (i32.const 1)))
        (call $fan (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "fan")
    (call $fan (i32.const 60)))
  (func (export "quick") (result i32)
    (local $i i32)
    (loop $l
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 1000))))
    (local.get $i)))
