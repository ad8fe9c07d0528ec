package bridge

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
)

func TestReadHelloUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hello   map[string]any
		want    []string
		wantErr bool
	}{
		{"absent", map[string]any{}, nil, false},
		{"delta channels", map[string]any{"unsupported": []any{"delta_channels"}}, []string{"delta_channels"}, false},
		{"not strings", map[string]any{"unsupported": []any{json.Number("1")}}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]any{"protocol": protocolName, "version": json.Number(strconv.Itoa(protocolVersion)), "name": "S", "capabilities": []any{"open"}}
			for k, v := range tc.hello {
				m[k] = v
			}
			var p Process
			err := p.readHello(m)
			if (err != nil) != tc.wantErr {
				t.Fatalf("readHello: %v, want error %v", err, tc.wantErr)
			}
			if got := p.Unsupported(); !tc.wantErr && !slices.Equal(got, tc.want) {
				t.Errorf("Unsupported() = %q, want %q", got, tc.want)
			}
		})
	}
}
