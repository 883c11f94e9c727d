;; @attack apconnect_call spins forever on describe, the first call the host
;;         makes after instantiation.
;; @host   stops describe at the load deadline and refuses the plugin with
;;         plugin_timeout; nothing of it is registered.
;; @limits load_ms=200
;; @load   plugin_timeout "describe" "200ms"
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
  (data (i32.const 1024) "{\"name\":\"loop_describe\",\"version\":\"1\",\"abi_version\":1}\00")
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (loop $forever (br $forever)) (i32.const 0)))
