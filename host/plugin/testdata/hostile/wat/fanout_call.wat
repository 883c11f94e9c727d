;; @attack a tool recurses without a loop and without going deep: each level
;;         calls the next twice, 2^60 calls that never pass 61 frames, so
;;         neither the stack budget nor a check at loop headers stops it
;;         (wazero's WithCloseOnContextDone checks loops only: before the
;;         host's own checkpoints this call ran forever and held a core).
;; @host   stops the call at its deadline with plugin_timeout (the guard's
;;         checkpoint at every function entry), closes the instance and
;;         keeps serving.
;; @limits tool_ms=100
;; @load   ok
;; @call   tool fan -> plugin_timeout "did not finish within 100ms"
;; @call   tool fan -> plugin_timeout "instance was closed"
(module
  (import "apconnect" "input" (func $input (param i32)))
  (import "apconnect" "output" (func $output (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"fanout_call\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"fan\",\"description\":\"fans out\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (func (export "apconnect_abi_version") (result i32) (i32.const 1))
  ;; $emit hands the NUL-terminated string at $p to the host as the output.
  (func $emit (param $p i32) (local $q i32)
    (local.set $q (local.get $p))
    (block $done (loop $scan
      (br_if $done (i32.eqz (i32.load8_u (local.get $q))))
      (local.set $q (i32.add (local.get $q) (i32.const 1)))
      (br $scan)))
    (call $output (local.get $p) (i32.sub (local.get $q) (local.get $p))))
  (func $fan (param $n i32)
    (if (local.get $n)
      (then
        (call $fan (i32.sub (local.get $n) (i32.const 1)))
        (call $fan (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (call $fan (i32.const 60))
    (i32.const 0)))
