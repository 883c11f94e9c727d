package knowledge

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// BM25's parameters, the usual ones (FTS5's too).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// sampleSize is how many of the newest index texts the ranking's document
// frequencies are estimated from.
const sampleSize = 1024

// rank scores the candidates with BM25 and sorts them best first, newer
// first among equals. The terms are substrings, not words, so BM25 is
// taken over substring occurrences:
//
//   - tf, a term's occurrences in the candidate's index text;
//   - the document length, its index text in characters, against the mean
//     over the candidates;
//   - the document frequency of a term, estimated from the newest
//     sampleSize index texts (exact while the service holds no more): the
//     share of them holding the term, times N;
//   - N, the number of events (the checkpoint: no seq is ever removed).
//
// It reads nothing from the database: counting the events that hold a
// substring there means reading every posting list of its trigrams again
// (what FTS5's own bm25() does), which costs more than the search.
func rank(cands []candidate, terms []string, n int64, s *textSample) {
	if len(cands) == 0 {
		return
	}
	var total float64
	for i := range cands {
		total += float64(utf8.RuneCountInString(cands[i].text))
	}
	avg := max(total/float64(len(cands)), 1)
	idf := make([]float64, len(terms))
	for i, t := range terms {
		df := s.docFreq(t, n)
		idf[i] = math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	}
	for i := range cands {
		c := &cands[i]
		norm := bm25K1 * (1 - bm25B + bm25B*float64(utf8.RuneCountInString(c.text))/avg)
		for j, t := range terms {
			tf := float64(strings.Count(c.text, t))
			c.score += idf[j] * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		case a.seq > b.seq:
			return -1
		case a.seq < b.seq:
			return 1
		}
		return 0
	})
}

// textSample holds the newest index texts, a ring of at most sampleSize.
// It is safe for concurrent use.
type textSample struct {
	mu    sync.RWMutex
	texts []string
	next  int // where the next text goes once the ring is full
}

// load fills the sample with the newest index texts of the database.
func (s *textSample) load(ctx context.Context, q querier) error {
	rows, err := q.QueryContext(ctx, `SELECT body FROM knowledge_text ORDER BY rowid DESC LIMIT ?`, sampleSize)
	if err != nil {
		return err
	}
	defer rows.Close()
	var texts []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return err
		}
		texts = append(texts, t)
	}
	s.mu.Lock()
	s.texts, s.next = texts, 0
	s.mu.Unlock()
	return rows.Err()
}

// add records the index text of a committed event.
func (s *textSample) add(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.texts) < sampleSize {
		s.texts = append(s.texts, text)
		return
	}
	s.texts[s.next] = text
	s.next = (s.next + 1) % sampleSize
}

// docFreq estimates how many of n events hold term.
func (s *textSample) docFreq(term string, n int64) float64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.texts) == 0 {
		return 0
	}
	held := 0
	for _, t := range s.texts {
		if strings.Contains(t, term) {
			held++
		}
	}
	return float64(held) / float64(len(s.texts)) * float64(n)
}
