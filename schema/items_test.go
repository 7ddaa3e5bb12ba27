package schema

import (
	"testing"
	"testing/fstest"
)

// ItemLocation allows the item-by-item check only where nothing but
// "items" looks at the array's items: each keyword that sees the array or
// its items from elsewhere turns it off.
func TestItemLocation(t *testing.T) {
	const item = `{"type":"object","required":["id"],"properties":{"id":{"type":"number","minimum":1}}}`
	cases := []struct {
		name, schema, member string
		want                 bool
	}{
		{"plain", `{"type":"object","required":["tasks"],"additionalProperties":false,"properties":{"goal":{"type":"string","minLength":1},"tasks":{"type":"array","description":"d","items":` + item + `}}}`, "tasks", true},
		{"items by reference", `{"type":"object","properties":{"tasks":{"type":"array","items":{"$ref":"#/$defs/t"}}},"$defs":{"t":` + item + `}}`, "tasks", true},
		{"root array", `{"type":"array","items":` + item + `}`, "", true},
		{"uniqueItems", `{"type":"object","properties":{"tasks":{"type":"array","uniqueItems":true,"items":` + item + `}}}`, "tasks", false},
		{"minItems", `{"type":"object","properties":{"tasks":{"type":"array","minItems":1,"items":` + item + `}}}`, "tasks", false},
		{"maxItems on the root array", `{"type":"array","maxItems":3,"items":` + item + `}`, "", false},
		{"contains", `{"type":"object","properties":{"tasks":{"type":"array","contains":` + item + `,"items":` + item + `}}}`, "tasks", false},
		{"prefixItems", `{"type":"object","properties":{"tasks":{"type":"array","prefixItems":[` + item + `],"items":` + item + `}}}`, "tasks", false},
		{"unevaluatedItems", `{"type":"object","properties":{"tasks":{"type":"array","unevaluatedItems":false,"items":` + item + `}}}`, "tasks", false},
		{"allOf on the root", `{"type":"object","allOf":[{"properties":{"tasks":{"maxItems":2}}}],"properties":{"tasks":{"type":"array","items":` + item + `}}}`, "tasks", false},
		{"if on the root", `{"type":"object","if":{"required":["goal"]},"then":{"properties":{"tasks":{"minItems":1}}},"properties":{"tasks":{"type":"array","items":` + item + `}}}`, "tasks", false},
		{"$ref on the root", `{"$ref":"#/$defs/r","$defs":{"r":{"properties":{"tasks":{"maxItems":1}}}},"type":"object","properties":{"tasks":{"type":"array","items":` + item + `}}}`, "tasks", false},
		{"enum on the root", `{"type":"object","enum":[{"tasks":[]}],"properties":{"tasks":{"type":"array","items":` + item + `}}}`, "tasks", false},
		{"patternProperties", `{"type":"object","patternProperties":{"^t":{"maxItems":1}},"properties":{"tasks":{"type":"array","items":` + item + `}}}`, "tasks", false},
		{"dependentSchemas", `{"type":"object","dependentSchemas":{"goal":{"properties":{"tasks":{"maxItems":1}}}},"properties":{"tasks":{"type":"array","items":` + item + `}}}`, "tasks", false},
		{"array by reference", `{"type":"object","properties":{"tasks":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"array","items":` + item + `}}}`, "tasks", false},
		{"no items keyword", `{"type":"object","properties":{"tasks":{"type":"array"}}}`, "tasks", false},
		{"member not declared", `{"type":"object","properties":{"goal":{"type":"string"}}}`, "tasks", false},
		{"dynamic reference in the items", `{"$dynamicAnchor":"n","type":"object","properties":{"tasks":{"type":"array","items":{"properties":{"sub":{"$dynamicRef":"#n"}}}}}}`, "tasks", false},
		{"boolean array schema", `{"type":"object","properties":{"tasks":true}}`, "tasks", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := NewSet("https://example.test/", fstest.MapFS{"s.json": {Data: []byte(c.schema)}})
			loc, ok := set.ItemLocation("s.json", c.member)
			if ok != c.want {
				t.Fatalf("ItemLocation = %q, %v; want %v", loc, ok, c.want)
			}
			if ok {
				// The location compiles, and is the array's items.
				if _, err := set.Compile(loc); err != nil {
					t.Fatal(err)
				}
				if ps, _ := set.Validate(loc, map[string]any{"id": 0.0}); len(ps) == 0 {
					t.Fatalf("%s accepts an item the schema refuses", loc)
				}
			}
			// The answer is kept.
			if loc2, ok2 := set.ItemLocation("s.json", c.member); loc2 != loc || ok2 != ok {
				t.Fatalf("second answer %q, %v", loc2, ok2)
			}
		})
	}
}
