;; The smallest tool plugin, for the package example: describe (op 1)
;; announces one tool, "greet"; any other call answers it with a fixed
;; text. Real plugins are written with the guest SDKs (sdk-guest/) and
;; built with plugintest.Build, BuildRust or BuildC.
(module
  (import "apconnect" "output" (func $output (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"greeter\",\"version\":\"1.0.0\",\"abi_version\":1,\"tools\":[{\"name\":\"greet\",\"description\":\"Says hello.\",\"input_schema\":{\"type\":\"object\",\"additionalProperties\":false}}]}\00")
  (data (i32.const 2048) "{\"content\":[{\"type\":\"text\",\"text\":\"hello from a wasm tool\"}]}\00")
  (func (export "apconnect_abi_version") (result i32) (i32.const 1))
  ;; emit writes the NUL-terminated text at $p as the call's output.
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
    (call $emit (i32.const 2048))
    (i32.const 0)))
