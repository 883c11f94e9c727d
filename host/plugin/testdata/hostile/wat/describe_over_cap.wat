;; @attack a describe output of 2 MiB, over the 1 MiB cap of describe.
;; @host   refuses the plugin at load with plugin_output_too_large.
;; @load   plugin_output_too_large "2097152 bytes"
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
  (memory (export "memory") 40)
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (call $output (i32.const 0) (i32.const 2097152)) (i32.const 0)))
