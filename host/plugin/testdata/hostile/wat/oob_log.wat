;; @attack calls the log import with a pointer outside linear memory.
;; @host   refuses the call with plugin_invalid_output.
;; @load   ok
;; @call   tool t -> plugin_invalid_output "log:" "outside guest memory"
(module
  (import "apconnect" "log" (func $log (param i32 i32 i32)))
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
  (data (i32.const 1024) "{\"name\":\"oob_log\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"t\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (call $log (i32.const 1) (i32.const 0xfffffff0) (i32.const 100)) (i32.const 0)))
