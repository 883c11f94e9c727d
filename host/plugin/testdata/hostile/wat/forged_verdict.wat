;; @attack a validate answer that says ok while listing an error, hoping one
;;         reader takes "ok" and another the errors.
;; @host   refuses the answer with plugin_invalid_output; the write path fails
;;         closed for the type.
;; @load   ok
;; @call   validate demo.v -> plugin_invalid_output "ok is true but 1 errors"
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
  (data (i32.const 1024) "{\"name\":\"forged_verdict\",\"version\":\"1\",\"abi_version\":1,\"validates\":[\"demo.v\"]}\00")
  (data (i32.const 2048) "{\"ok\":true,\"errors\":[{\"path\":\"/payload\",\"message\":\"no\"}]}\00")
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (call $emit (i32.const 2048)) (i32.const 0)))
