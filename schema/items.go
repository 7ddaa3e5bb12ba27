package schema

import (
	"reflect"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The state store checks a large plan.json, tasks.json or tracker as the
// document with its array of items emptied plus each item it has not
// checked before (internal/state). That is the whole document's check
// only when nothing but the array's "items" keyword looks at the items:
// no length, uniqueness or "contains" on the array, and no keyword on the
// root that sees the array's value (a combinator, a reference, a
// condition, enum/const, unevaluated*). ItemLocation says so from the
// compiled schema, so a distribution whose schemas say more is checked
// whole.

// rootKeywords are the fields of a compiled object schema that may be set
// on the root: they look at member names and presence, or annotate, but
// never at a declared member's value. Properties is checked apart. Built
// on first use (reflection), not when a hook process starts.
var rootKeywords = sync.OnceValue(func() map[string]bool {
	return fieldSet("DraftVersion", "Location", "ID", "Anchor", "DynamicAnchor", "RecursiveAnchor",
		"Types", "Required", "Properties", "AdditionalProperties", "MinProperties", "MaxProperties", "PropertyNames",
		"DependentRequired", "Title", "Description", "Default", "Comment", "ReadOnly", "WriteOnly", "Examples", "Deprecated")
})

// arrayKeywords are the fields that may be set on the array itself.
var arrayKeywords = sync.OnceValue(func() map[string]bool {
	return fieldSet("DraftVersion", "Location", "ID", "Anchor", "DynamicAnchor", "RecursiveAnchor",
		"Types", "Items", "Items2020", "Title", "Description", "Default", "Comment", "ReadOnly", "WriteOnly", "Examples", "Deprecated")
})

func fieldSet(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		if _, ok := reflect.TypeFor[jsonschema.Schema]().FieldByName(n); !ok {
			panic("schema: no field " + n)
		}
		m[n] = true
	}
	return m
}

// onlyKeywords reports whether sch sets no exported field outside allowed.
func onlyKeywords(sch *jsonschema.Schema, allowed map[string]bool) bool {
	v := reflect.ValueOf(sch).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && !allowed[f.Name] && !v.Field(i).IsZero() {
			return false
		}
	}
	return true
}

// ItemLocation returns the location of the schema each item of the array
// at member of loc's root object is checked against (member "" is the
// root itself, an array), and ok when the document's check is exactly the
// check of the document with that array emptied plus each item's check at
// that location, problems under the array's pointer. ok is false when loc
// does not compile or anything else in it looks at the items.
func (s *Set) ItemLocation(loc, member string) (string, bool) {
	key := loc + "\x00" + member
	s.mu.Lock()
	r, seen := s.itemLocs[key]
	s.mu.Unlock()
	if seen {
		return r.loc, r.ok
	}
	itemLoc, ok := s.itemLocation(loc, member)
	s.mu.Lock()
	if s.itemLocs == nil {
		s.itemLocs = map[string]itemLocResult{}
	}
	s.itemLocs[key] = itemLocResult{itemLoc, ok}
	s.mu.Unlock()
	return itemLoc, ok
}

type itemLocResult struct {
	loc string
	ok  bool
}

func (s *Set) itemLocation(loc, member string) (string, bool) {
	if strings.Contains(loc, "#") {
		return "", false
	}
	root, err := s.Compile(loc)
	if err != nil || root.Bool != nil {
		return "", false
	}
	arr, ptr := root, "#/items"
	if member != "" {
		if !onlyKeywords(root, rootKeywords()) {
			return "", false
		}
		arr = root.Properties[member]
		ptr = "#/properties/" + escapePointer(member) + "/items"
	}
	if arr == nil || arr.Bool != nil || !onlyKeywords(arr, arrayKeywords()) {
		return "", false
	}
	items := arr.Items2020
	if items == nil {
		items, _ = arr.Items.(*jsonschema.Schema)
	}
	// A dynamic reference resolves by the path it is reached through,
	// which the item's own check does not share with the whole's.
	if items == nil || hasDynamicRef(items, map[*jsonschema.Schema]bool{}) {
		return "", false
	}
	return loc + ptr, true
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

var schemaPtr = reflect.TypeFor[*jsonschema.Schema]()

// hasDynamicRef reports whether sch or any schema it reaches uses
// $dynamicRef or $recursiveRef.
func hasDynamicRef(sch *jsonschema.Schema, seen map[*jsonschema.Schema]bool) bool {
	if sch == nil || seen[sch] {
		return false
	}
	seen[sch] = true
	if sch.DynamicRef != nil || sch.RecursiveRef != nil {
		return true
	}
	found := false
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if found || !v.IsValid() {
			return
		}
		switch v.Kind() {
		case reflect.Interface:
			walk(v.Elem())
		case reflect.Pointer:
			if v.Type() == schemaPtr && !v.IsNil() {
				found = found || hasDynamicRef(v.Interface().(*jsonschema.Schema), seen)
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		}
	}
	v := reflect.ValueOf(sch).Elem()
	t := v.Type()
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			walk(v.Field(i))
		}
	}
	return found
}
