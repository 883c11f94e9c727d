;; @attack recursion with wide frames: each level keeps 64 i64 values live
;;         across the recursive call and declares 1000 locals, so every frame
;;         is large and few levels reach hundreds of MiB.
;; @host   weighs each function's frame from its locals and code, stops the
;;         recursion at the stack budget with plugin_trap ("call stack
;;         exhausted") and keeps the host's peak RSS bounded.
;; @limits memory_mib=16 instances=4
;; @load   ok
;; @call   tool recurse -> plugin_trap "call stack exhausted"
;; @rss    4 tool recurse 96MiB
(module
  (import "apconnect" "input" (func $input (param i32)))
  (import "apconnect" "output" (func $output (param i32 i32)))
  (func (export "apconnect_abi_version") (result i32) (i32.const 1))
  ;; $emit hands the NUL-terminated string at $p to the host as the output.
  (func $emit (param $p i32) (local $q i32)
    (local.set $q (local.get $p))
    (block $done (loop $scan
      (br_if $done (i32.eqz (i32.load8_u (local.get $q))))
      (local.set $q (i32.add (local.get $q) (i32.const 1)))
      (br $scan)))
    (call $output (local.get $p) (i32.sub (local.get $q) (local.get $p))))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"stack_wide_frames\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"recurse\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (func $wide (param $x i64) (result i64) (local $pad i64) (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 i64)
    (i64.mul (local.get $x) (i64.const 3))
    (i64.mul (local.get $x) (i64.const 4))
    (i64.mul (local.get $x) (i64.const 5))
    (i64.mul (local.get $x) (i64.const 6))
    (i64.mul (local.get $x) (i64.const 7))
    (i64.mul (local.get $x) (i64.const 8))
    (i64.mul (local.get $x) (i64.const 9))
    (i64.mul (local.get $x) (i64.const 10))
    (i64.mul (local.get $x) (i64.const 11))
    (i64.mul (local.get $x) (i64.const 12))
    (i64.mul (local.get $x) (i64.const 13))
    (i64.mul (local.get $x) (i64.const 14))
    (i64.mul (local.get $x) (i64.const 15))
    (i64.mul (local.get $x) (i64.const 16))
    (i64.mul (local.get $x) (i64.const 17))
    (i64.mul (local.get $x) (i64.const 18))
    (i64.mul (local.get $x) (i64.const 19))
    (i64.mul (local.get $x) (i64.const 20))
    (i64.mul (local.get $x) (i64.const 21))
    (i64.mul (local.get $x) (i64.const 22))
    (i64.mul (local.get $x) (i64.const 23))
    (i64.mul (local.get $x) (i64.const 24))
    (i64.mul (local.get $x) (i64.const 25))
    (i64.mul (local.get $x) (i64.const 26))
    (i64.mul (local.get $x) (i64.const 27))
    (i64.mul (local.get $x) (i64.const 28))
    (i64.mul (local.get $x) (i64.const 29))
    (i64.mul (local.get $x) (i64.const 30))
    (i64.mul (local.get $x) (i64.const 31))
    (i64.mul (local.get $x) (i64.const 32))
    (i64.mul (local.get $x) (i64.const 33))
    (i64.mul (local.get $x) (i64.const 34))
    (i64.mul (local.get $x) (i64.const 35))
    (i64.mul (local.get $x) (i64.const 36))
    (i64.mul (local.get $x) (i64.const 37))
    (i64.mul (local.get $x) (i64.const 38))
    (i64.mul (local.get $x) (i64.const 39))
    (i64.mul (local.get $x) (i64.const 40))
    (i64.mul (local.get $x) (i64.const 41))
    (i64.mul (local.get $x) (i64.const 42))
    (i64.mul (local.get $x) (i64.const 43))
    (i64.mul (local.get $x) (i64.const 44))
    (i64.mul (local.get $x) (i64.const 45))
    (i64.mul (local.get $x) (i64.const 46))
    (i64.mul (local.get $x) (i64.const 47))
    (i64.mul (local.get $x) (i64.const 48))
    (i64.mul (local.get $x) (i64.const 49))
    (i64.mul (local.get $x) (i64.const 50))
    (i64.mul (local.get $x) (i64.const 51))
    (i64.mul (local.get $x) (i64.const 52))
    (i64.mul (local.get $x) (i64.const 53))
    (i64.mul (local.get $x) (i64.const 54))
    (i64.mul (local.get $x) (i64.const 55))
    (i64.mul (local.get $x) (i64.const 56))
    (i64.mul (local.get $x) (i64.const 57))
    (i64.mul (local.get $x) (i64.const 58))
    (i64.mul (local.get $x) (i64.const 59))
    (i64.mul (local.get $x) (i64.const 60))
    (i64.mul (local.get $x) (i64.const 61))
    (i64.mul (local.get $x) (i64.const 62))
    (i64.mul (local.get $x) (i64.const 63))
    (i64.mul (local.get $x) (i64.const 64))
    (i64.mul (local.get $x) (i64.const 65))
    (i64.mul (local.get $x) (i64.const 66))
    (call $wide (i64.add (local.get $x) (i64.const 1)))
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
    i64.add
  )
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (drop (call $wide (i64.const 1))) (i32.const 0)))
