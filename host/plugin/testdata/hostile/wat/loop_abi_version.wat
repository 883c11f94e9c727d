;; @attack apconnect_abi_version, which the host calls on every new instance,
;;         never returns.
;; @host   stops it at the load deadline and refuses the plugin with
;;         plugin_invalid_module.
;; @limits load_ms=200
;; @load   plugin_invalid_module "first instance" "apconnect_abi_version"
(module
  (import "apconnect" "output" (func $output (param i32 i32)))
  (memory (export "memory") 1)
  (func (export "apconnect_abi_version") (result i32) (loop $forever (br $forever)) (i32.const 1))
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32) (i32.const 0)))
