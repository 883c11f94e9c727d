package scenario

import "fmt"

// knowledgeTitle is the title of bob's publication, and knowledgeQuery
// the lexical search that must find it.
const (
	knowledgeTitle = "Verifiers must reject non-canonical Ed25519 signatures"
	knowledgeQuery = "non-canonical Ed25519 verifiers"
)

// knowledge: after the room has closed, bob publishes its conclusion to the
// hub's knowledge service; alice finds it by search and checks its status
// (Agent Knowledge).
func (r *run) knowledge() error {
	r.section("bob publishes the room's conclusion; alice finds it (Agent Knowledge)")
	res, err := r.call(r.Bob, "knowledge_submit", map[string]any{"services": []any{r.Host}, "type": "knowledge.publish",
		"payload": map[string]any{
			"license": "https://creativecommons.org/licenses/by/4.0/", "kind": "synthesis", "language": "en",
			"title": knowledgeTitle,
			"statement": "An Agent Identity verifier must reject Ed25519 signatures whose S is not canonical (S >= L) " +
				"and public keys of small order; strict verification stays.",
			"context": map[string]any{"scope": "Ed25519 signature verification in Agent Identity 3.1 verifiers",
				"conditions":  []any{"Signatures over JCS-canonical event bytes"},
				"limitations": []any{"Agreed by two agents in one discussion; not a survey of implementations"}},
			"basis": fmt.Sprintf("The Agent Discourse room %s on %s (%d verified records), closed with: Settled: strict verification stays.",
				r.res.RoomID, r.Host, r.res.Records),
			"tags": []any{"signatures", "ed25519", "agent-identity"},
		}})
	if err != nil {
		return err
	}
	results, _ := res["results"].([]any)
	id := str(res, "id")
	if err := expect(id != "" && len(results) == 1 && str(results[0], "service") == r.Host && str(results[0], "item", "id") == id &&
		num(results[0], "item", "seq") > 0 && results[0].(map[string]any)["error"] == nil,
		"knowledge_submit should be accepted by %s, got %v", r.Host, res); err != nil {
		return err
	}
	r.res.KnowledgeID, r.res.KnowledgeSeq = id, num(results[0], "item", "seq")
	r.say(r.Bob, "knowledge_submit knowledge.publish (synthesis) → event %s accepted by the hub as seq %d", id, r.res.KnowledgeSeq)

	found, err := r.call(r.Alice, "knowledge_search", map[string]any{"service": r.Host, "text": knowledgeQuery, "mode": "lexical"})
	if err != nil {
		return err
	}
	hits, _ := found["hits"].([]any)
	if err := expect(len(hits) > 0 && str(hits[0], "item", "id") == id && str(hits[0], "item", "actor") == r.Bob.ID &&
		str(found, "coverage", "exhaustive") == "true", "knowledge_search %q should rank bob's item first, exhaustively, got %v", knowledgeQuery, found); err != nil {
		return err
	}
	r.say(r.Alice, "knowledge_search %q (lexical) → %d hit(s), first bob's %q; coverage exhaustive, ranking %s",
		knowledgeQuery, len(hits), str(hits[0], "item", "payload", "title"), str(found, "ranking", "id"))

	st, err := r.call(r.Alice, "knowledge_status", map[string]any{"service": r.Host, "id": id})
	if err != nil {
		return err
	}
	if err := expect(st["complete"] == true && str(st, "status") == "active" && str(st, "item", "id") == id,
		"knowledge_status should be complete and active, got %v", st); err != nil {
		return err
	}
	retr, _ := st["retractions"].([]any)
	succ, _ := st["successors"].([]any)
	ass, _ := st["assessments"].([]any)
	r.say(r.Alice, "knowledge_status → complete, status %s (%d retractions, %d successors, %d assessments)", str(st, "status"), len(retr), len(succ), len(ass))
	return nil
}
