
-- Snapshots written before this step hold the room head of the 0f87fee rule
-- (messages moved it) and type definitions with a version. snapshot_seq 0
-- makes the host replay each room from its genesis record on next load and
-- write a fresh snapshot; the records themselves are unchanged.
UPDATE adp_rooms SET snapshot_seq = 0;
