package profile

import "testing"

func TestComparePin(t *testing.T) {
	pinned := Pin{Nonce: 9, EventID: "nine"}
	for _, c := range []struct {
		served Pin
		want   PinOrder
	}{
		{Pin{10, "ten"}, PinNewer},
		{Pin{9, "nine"}, PinSame},
		{Pin{9, "another nine"}, PinStale},
		{Pin{8, "eight"}, PinStale},
		{Pin{8, "nine"}, PinStale}, // the event ID does not make an older nonce current
	} {
		if got := ComparePin(pinned, c.served); got != c.want {
			t.Errorf("ComparePin(%+v, %+v) = %d, want %d", pinned, c.served, got, c.want)
		}
		err := CheckPin(pinned, c.served)
		if c.want != PinStale {
			if err != nil {
				t.Errorf("CheckPin(%+v): %v", c.served, err)
			}
			continue
		}
		e := asError(t, err)
		if e.Code != CodeStaleProfile || e.Data["pinned_nonce"] != pinned.Nonce || e.Data["served_event_id"] != c.served.EventID {
			t.Errorf("CheckPin(%+v) = %+v", c.served, e)
		}
	}
	// A first profile (nothing pinned) is always newer.
	if ComparePin(Pin{}, Pin{1, "one"}) != PinNewer {
		t.Error("a first profile is not newer than the zero pin")
	}
}
