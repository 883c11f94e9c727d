;; @attack _initialize busies itself for hundreds of millions of loop iterations
;;         (a third of a second on a fast core): short of the load deadline, so the plugin loads,
;;         but far beyond a 50 ms validate deadline. Every new instance pays it
;;         again, so once the first instance is gone (here: a trapping tool
;;         discards it) each call waits for a slow instantiation.
;; @host   counts instance creation against the call's deadline: the validate
;;         call that needs a new instance fails with plugin_timeout at 50 ms
;;         instead of succeeding after the slow _initialize.
;; @limits validate_ms=50 load_ms=60000 instances=1
;; @load   ok
;; @call   tool trap -> plugin_trap "unreachable"
;; @call   validate demo.slow -> plugin_timeout "50ms"
;; @call   validate demo.slow -> plugin_timeout "50ms"
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
  (data (i32.const 1024) "{\"name\":\"slow_initialize\",\"version\":\"1\",\"abi_version\":1,\"validates\":[\"demo.slow\"],\"tools\":[{\"name\":\"trap\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) "{\"ok\":true}\00")
  (global $i (mut i32) (i32.const 0))
  (func (export "_initialize")
    (global.set $i (i32.const 0))
    (loop $busy
      (global.set $i (i32.add (global.get $i) (i32.const 1)))
      (br_if $busy (i32.lt_u (global.get $i) (i32.const 300000000)))))
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 2))
      (then (call $emit (i32.const 2048)) (return (i32.const 0))))
    unreachable))
