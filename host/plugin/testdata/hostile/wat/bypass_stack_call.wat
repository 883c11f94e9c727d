;; @attack tries to call its own function body directly, past the host's
;;         stack-counting thunk: the host moves the bodies of the module's
;;         functions to new indices after its own (here 6 functions, 2 of them
;;         imported, so the bodies move to 6 … 9), and $recurse calls index 7,
;;         where its own body lands, an index the module does not have. Built without validation (--no-check).
;; @host   refuses the module at load: its code names a function index beyond
;;         its own (plugin_invalid_module).
;; @build  --no-check
;; @load   plugin_invalid_module "function index 7 is out of range"
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
  (data (i32.const 1024) "{\"name\":\"bypass_stack_call\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"recurse\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (func $recurse (call 7))
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (call $recurse) (i32.const 0)))
