;; A well-behaved module, written without the SDK like the corpus beside it:
;; one tool, "ping", that answers "pong". The corpus test loads it into the
;; same Runtime as every hostile case and calls it after each one, to show
;; that the host still serves plugins after the attack.
(module
  (import "apconnect" "input" (func $input (param i32)))
  (import "apconnect" "output" (func $output (param i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"name\":\"control\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"ping\",\"description\":\"answers pong\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) "{\"content\":[{\"type\":\"text\",\"text\":\"pong\"}]}\00")
  (func (export "apconnect_abi_version") (result i32) (i32.const 1))
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
