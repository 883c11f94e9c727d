;; @attack a tool grows a table without a declared maximum by 2^28 entries:
;;         2 GiB of host memory that memory_mib does not count.
;; @host   gives every table a maximum (the module's own or the host's bound
;;         of 65536 entries): table.grow returns -1, which the module reports
;;         as a plugin error, and the host's peak RSS hardly moves.
;; @load   ok
;; @call   tool grow -> plugin_error "table.grow refused"
;; @rss    1 tool grow 64MiB
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
  (data (i32.const 1024) "{\"name\":\"table_grow\",\"version\":\"1\",\"abi_version\":1,\"tools\":[{\"name\":\"grow\",\"description\":\"misbehaves\",\"input_schema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) "{\"content\":[{\"type\":\"text\",\"text\":\"grew\"}]}\00")
  (data (i32.const 3072) "{\"error\":{\"code\":\"refused\",\"message\":\"table.grow refused\"}}\00")
  (table $t 1 funcref)
  (func (export "apconnect_call") (param $op i32) (param $n i32) (result i32)
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (call $emit (i32.const 1024)) (return (i32.const 0))))
    (if (i32.eq (table.grow $t (ref.null func) (i32.const 0x10000000)) (i32.const -1))
        (then (call $emit (i32.const 3072)) (return (i32.const 1))))
    (call $emit (i32.const 2048)) (i32.const 0)))
