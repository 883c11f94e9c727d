;; @attack its describe answer is an error envelope whose message moves the
;;         cursor up, erases the line and prints "All checks passed." - so that
;;         the refusal's FAIL row in "doctor" is painted over.
;; @host   refuses the plugin (plugin_error) and the message reaches the
;;         terminal escaped (cmd/apconnect TestTerminalEscapes).
;; @load   plugin_error "describe" "\x1b[1A"
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
  (data (i32.const 1024) "{\"error\":{\"code\":\"nope\",\"message\":\"\\r\\u001b[1A\\u001b[2K\\u001b[32mAll checks passed.\\u001b[0m\"}}\00")
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (call $emit (i32.const 1024)) (i32.const 1)))
