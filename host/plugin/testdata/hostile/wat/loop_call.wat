;; @attack apconnect_call never returns, for every operation but describe:
;;         validate, watch and tool calls spin in a loop without a single call
;;         into the host.
;; @host   stops each call at its own deadline with plugin_timeout, closes the
;;         instance and keeps serving (the next call gets a fresh instance).
;; @limits validate_ms=50 watch_ms=50 tool_ms=100
;; @load   ok
;; @call   validate demo.spin -> plugin_timeout "did not finish within 50ms"
;; @call   watch demo.spin -> plugin_timeout "did not finish within 50ms"
;; @call   tool spin -> plugin_timeout "did not finish within 100ms"
;; @call   tool spin -> plugin_timeout "instance was closed"
(module
  (import "apconnect" "input" (func $input (param i32)))
  (import "apconnect" "output" (func $output (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"loop_call\",\"version\":\"1\",\"abi_version\":1,\"validates\":[\"demo.spin\"],\"watches\":[\"demo.spin\"],\"tools\":[{\"name\":\"spin\",\"description\":\"spins\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (func (export "apconnect_abi_version") (result i32) (i32.const 1))
  ;; $emit hands the NUL-terminated string at $p to the host as the output.
  (func $emit (param $p i32) (local $q i32)
    (local.set $q (local.get $p))
    (block $done (loop $scan
      (br_if $done (i32.eqz (i32.load8_u (local.get $q))))
      (local.set $q (i32.add (local.get $q) (i32.const 1)))
      (br $scan)))
    (call $output (local.get $p) (i32.sub (local.get $q) (local.get $p))))
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (loop $forever (br $forever))
    (i32.const 0)))
