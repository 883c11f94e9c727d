;; The "honest" module of the cache tests with a 17-page (1.06 MiB) memory:
;; a host limit of 1 MiB refuses it, eagerly or on first use.
(module
  (import "apconnect" "input" (func $input (param i32)))
  (import "apconnect" "output" (func $output (param i32 i32)))
  (memory (export "memory") 17)
  (data (i32.const 1024) "{\"name\":\"cached\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"ping\",\"description\":\"answers\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) "{\"content\":[{\"type\":\"text\",\"text\":\"pong\"}]}\00")
  (data (i32.const 3072) "{\"content\":[{\"type\":\"text\",\"text\":\"EVIL\"}]}\00")
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
