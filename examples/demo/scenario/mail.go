package scenario

import "slices"

// mailbox is one agent's published Agent Mail mailbox.
type mailbox struct{ id, address string }

// letter is a letter as the scenario follows it.
type letter struct{ id, thread string }

// mail: after the room, alice and bob exchange a private, threaded pair of
// letters through the hub's relay (Agent Mail).
func (r *run) mail() error {
	r.section("A private letter and its reply through the hub's relay (Agent Mail)")
	for _, step := range []func() error{r.publishMailboxes, r.sendLetter, r.readAndReply, r.readReply} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// publishMailboxes: each agent opens a mailbox routed at the hub.
func (r *run) publishMailboxes() error {
	r.boxes = map[*Agent]mailbox{}
	for _, a := range []*Agent{r.Alice, r.Bob} {
		res, err := r.call(a, "mail_mailbox_publish", map[string]any{"routes": []any{r.Host}})
		if err != nil {
			return err
		}
		published, _ := res["published"].([]any)
		failed, _ := res["failed"].([]any)
		box := mailbox{id: str(res, "mailbox", "mailbox_id"), address: str(res, "mailbox", "address")}
		if err := expect(box.id != "" && str(res, "mailbox", "status") == "open" && len(failed) == 0 && slices.Contains(published, any(r.Host)),
			"%s's mailbox should be open and published at %s, got %v", a.Name, r.Host, res); err != nil {
			return err
		}
		r.boxes[a] = box
		r.say(a, "mail_mailbox_publish routes=[hub] → mailbox %s, a fresh X25519 key; card signed and published", box.id)
	}
	return nil
}

// sendLetter: alice verifies bob's card and writes to him, attaching her
// own card for the reply.
func (r *run) sendLetter() error {
	bobBox := r.boxes[r.Bob]
	res, err := r.call(r.Alice, "mail_resolve", map[string]any{"agent_id": r.Bob.ID, "address": bobBox.address})
	if err != nil {
		return err
	}
	boxes, _ := res["mailboxes"].([]any)
	errs, _ := res["errors"].([]any)
	if err := expect(len(boxes) == 1 && len(errs) == 0 && str(boxes[0], "address") == bobBox.address && str(boxes[0], "card", "event", "actor") == r.Bob.ID &&
		str(boxes[0], "usable") == "true", "mail_resolve of bob's address should verify his one usable card, got %v", res); err != nil {
		return err
	}
	r.say(r.Alice, "mail_resolve bob's address → his card verifies (signed by bob, usable) and is pinned")
	sent, err := r.call(r.Alice, "mail_send", map[string]any{"to": bobBox.address, "reply_mailbox_id": r.boxes[r.Alice].id,
		"subject": "After the room: publish the conclusion?",
		"text":    "Thanks for the review. Could you publish the room's conclusion as Agent Knowledge, so other verifiers find it?"})
	if err != nil {
		return err
	}
	r.letter = letter{id: str(sent, "message", "message_id"), thread: str(sent, "message", "thread_id")}
	if err := expect(str(sent, "status") == "delivered" && r.letter.id != "" && str(sent, "message", "to") == r.Bob.ID &&
		str(sent, "message", "reply_address") == r.boxes[r.Alice].address, "alice's letter should be delivered with her reply card, got %v", sent); err != nil {
		return err
	}
	r.say(r.Alice, "mail_send with reply_mailbox_id → letter %s sealed to bob's key, delivered to the relay (which sees only ciphertext)", r.letter.id)
	return nil
}

// readAndReply: bob syncs, is woken by the letter, reads it and replies in
// its thread.
func (r *run) readAndReply() error {
	if err := r.syncMail(r.Bob); err != nil {
		return err
	}
	item, err := r.waitInbox(r.Bob, "mail.received")
	if err != nil {
		return err
	}
	if err := expect(str(item, "message", "message_id") == r.letter.id && str(item, "actor") == r.Alice.ID,
		"bob's mail.received item should be alice's letter %s, got %v", r.letter.id, item); err != nil {
		return err
	}
	r.say(r.Bob, "inbox_next → %s from %s: %q", str(item, "kind"), r.who(item["actor"]), str(item, "message", "summary"))
	list, err := r.call(r.Bob, "mail_list", map[string]any{"message_id": r.letter.id, "mark_read": true})
	if err != nil {
		return err
	}
	msgs, _ := list["messages"].([]any)
	if err := expect(len(msgs) == 1 && str(msgs[0], "direction") == "received" && str(msgs[0], "from") == r.Alice.ID &&
		str(msgs[0], "reply_address") == r.boxes[r.Alice].address && str(msgs[0], "read") == "true",
		"bob's mail_list should show alice's letter, read, with her reply card, got %v", list); err != nil {
		return err
	}
	parts, _ := msgs[0].(map[string]any)["parts"].([]any)
	if err := expect(len(parts) > 0, "alice's letter has no parts: %v", msgs[0]); err != nil {
		return err
	}
	r.say(r.Bob, "mail_list mark_read → %q: %q", str(msgs[0], "subject"), str(parts[0], "text"))
	reply, err := r.call(r.Bob, "mail_send", map[string]any{"in_reply_to": r.letter.id,
		"text": "Yes: I will publish it as a synthesis right after this, with the room as its basis."})
	if err != nil {
		return err
	}
	r.reply = letter{id: str(reply, "message", "message_id"), thread: str(reply, "message", "thread_id")}
	if err := expect(str(reply, "status") == "delivered" && str(reply, "message", "in_reply_to") == r.letter.id && r.reply.thread == r.letter.thread &&
		str(reply, "message", "mailbox_id") == r.boxes[r.Alice].id, "bob's reply should go to alice's reply card in the letter's thread, got %v", reply); err != nil {
		return err
	}
	r.say(r.Bob, "mail_send in_reply_to → reply %s delivered to alice's reply card, in thread %s", r.reply.id, r.reply.thread)
	_, err = r.call(r.Bob, "inbox_ack", map[string]any{"ids": []any{item["id"]}, "action": "handled"})
	return err
}

// readReply: alice syncs and reads the thread: her letter, then bob's
// reply to it.
func (r *run) readReply() error {
	if err := r.syncMail(r.Alice); err != nil {
		return err
	}
	item, err := r.waitInbox(r.Alice, "mail.received")
	if err != nil {
		return err
	}
	if err := expect(str(item, "message", "message_id") == r.reply.id, "alice's mail.received item should be bob's reply %s, got %v", r.reply.id, item); err != nil {
		return err
	}
	list, err := r.call(r.Alice, "mail_list", map[string]any{"thread_id": r.letter.thread, "mark_read": true})
	if err != nil {
		return err
	}
	msgs, _ := list["messages"].([]any)
	if err := expect(len(msgs) == 2 && str(msgs[0], "message_id") == r.letter.id && str(msgs[0], "direction") == "sent" &&
		str(msgs[1], "message_id") == r.reply.id && str(msgs[1], "direction") == "received" && str(msgs[1], "from") == r.Bob.ID &&
		str(msgs[1], "in_reply_to") == r.letter.id, "alice's thread should be her letter then bob's reply to it, got %v", list); err != nil {
		return err
	}
	parts, _ := msgs[1].(map[string]any)["parts"].([]any)
	if err := expect(len(parts) > 0, "bob's reply has no parts: %v", msgs[1]); err != nil {
		return err
	}
	r.say(r.Alice, "mail_list thread → 2 letters: hers, then bob's reply (in_reply_to %s): %q", r.letter.id, str(parts[0], "text"))
	_, err = r.call(r.Alice, "inbox_ack", map[string]any{"ids": []any{item["id"]}, "action": "handled"})
	return err
}

// syncMail fetches, verifies and opens what the relay holds for a. (A
// resident connector also syncs in the background, so a letter may have
// been opened already; the inbox item is what counts.)
func (r *run) syncMail(a *Agent) error {
	res, err := r.call(a, "mail_sync", nil)
	if err != nil {
		return err
	}
	errs, _ := res["errors"].([]any)
	received, _ := res["received"].([]any)
	if err := expect(len(errs) == 0, "%s's mail_sync errors: %v", a.Name, errs); err != nil {
		return err
	}
	r.say(a, "mail_sync → %d letter(s) fetched, verified and opened; %d inbox item(s) pending", len(received), num(res, "pending_inbox_count"))
	return nil
}
