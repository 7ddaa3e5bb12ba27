package install

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// A host's file as the tests edit it: nexus adds "nexus": VERSION, and
// uninstall takes it out.
func nexusFile(version string, install bool) JSONFile {
	return JSONFile{
		Name: "settings.json",
		Edit: func(o *Object) []string {
			if install {
				o.Set("nexus", version)
			} else {
				o.Delete("nexus")
			}
			return nil
		},
		Strip:     func(o *Object) { o.Delete("nexus") },
		Restoring: !install,
	}
}

func backupsIn(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.nexus-backup-*"))
	sort.Strings(m)
	return m
}

// TestBackupsRemovedWhenRestored: install, a second install that changes
// the file, then uninstall. A backup is made only of content holding
// something besides nexus's entries, and uninstall removes every backup
// whose content is, without nexus's entries, the file as it is now;
// the others stay, each named with why.
func TestBackupsRemovedWhenRestored(t *testing.T) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	for _, tc := range []struct {
		name     string
		original string // "" = no file before install
		edit     string // written between the installs and uninstall ("" = none)
		kept     int    // backups left after uninstall
		final    string // the file after uninstall ("" = gone)
	}{
		{"no file before", "", "", 0, ""},
		{"the user's file, as nexus writes JSON", "{\n  \"permissions\": {}\n}\n", "", 0, "{\n  \"permissions\": {}\n}\n"},
		{"the user's file, formatted otherwise", "{\"permissions\":{}}", "", 1, "{\n  \"permissions\": {}\n}\n"},
		{"the user changed the file since", "{\n  \"permissions\": {}\n}\n", "{\n  \"permissions\": {},\n  \"model\": \"x\",\n  \"nexus\": \"2\"\n}\n", 2, "{\n  \"permissions\": {},\n  \"model\": \"x\"\n}\n"},
		{"nexus's own file edited by the user", "", "{\n  \"nexus\": \"2\",\n  \"env\": {}\n}\n", 0, "{\n  \"env\": {}\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "settings.json")
			if tc.original != "" {
				os.WriteFile(file, []byte(tc.original), 0o644)
			}
			a, err := OpenAnchor(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			o := Options{Now: tick}
			for _, v := range []string{"1", "2"} {
				chs, err := EditJSONFile(a, nexusFile(v, true), o)
				if err != nil || len(chs) != 1 {
					t.Fatalf("install %s: %v %v", v, chs, err)
				}
				if b := chs[0].Backup; b != "" {
					got, _ := os.ReadFile(b)
					if !strings.Contains(string(got), "permissions") {
						t.Errorf("install %s backed up nexus's own content: %s", v, got)
					}
				}
			}
			if tc.original == "" && len(backupsIn(t, dir)) != 0 {
				t.Errorf("backups of nexus's own content: %v", backupsIn(t, dir))
			}
			if tc.edit != "" {
				os.WriteFile(file, []byte(tc.edit), 0o644)
			}
			chs, err := EditJSONFile(a, nexusFile("", false), o)
			if err != nil {
				t.Fatal(err)
			}
			left := backupsIn(t, dir)
			if len(left) != tc.kept {
				t.Errorf("backups left %v, want %d", left, tc.kept)
			}
			named := 0
			for _, ch := range chs[1:] {
				if !ch.Removed && len(ch.Notes) == 1 && strings.HasPrefix(ch.Notes[0], "kept: ") {
					named++
				}
			}
			if named != tc.kept {
				t.Errorf("%d kept backups named in %+v, want %d", named, chs, tc.kept)
			}
			b, err := os.ReadFile(file)
			if tc.final == "" {
				if err == nil {
					t.Errorf("the file stays: %s", b)
				}
			} else if string(b) != tc.final {
				t.Errorf("file after uninstall %q, want %q", b, tc.final)
			}
		})
	}
}

// TestPruneBackupsKeepsWhatItCannotRead: a backup that is not JSON, and
// one whose content still holds something, stay; a dry run removes
// nothing; names that are not nexus's backups are not looked at.
func TestPruneBackupsKeepsWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"settings.json.nexus-backup-20260101T000000Z":   "not json",
		"settings.json.nexus-backup-20260101T000001Z":   "{\n  \"nexus\": \"1\",\n  \"model\": \"x\"\n}\n",
		"settings.json.nexus-backup-20260101T000002Z-1": "{\n  \"nexus\": \"1\"\n}\n",
		"settings.json.nexus-backup-mine":               "{}",
		"settings.json.bak":                             "{}",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	a, _ := OpenAnchor(dir, false)
	defer a.Close()
	restore := StripJSON(func(o *Object) { o.Delete("nexus") })
	chs, err := PruneBackups(a, "settings.json", Options{DryRun: true}, restore)
	if err != nil || len(chs) != 3 || len(backupsIn(t, dir)) != 4 {
		t.Fatalf("dry run: %+v %v, left %v", chs, err, backupsIn(t, dir))
	}
	chs, err = PruneBackups(a, "settings.json", Options{}, restore)
	if err != nil || len(chs) != 3 {
		t.Fatalf("%+v %v", chs, err)
	}
	if !chs[2].Removed || chs[0].Removed || chs[1].Removed || !strings.Contains(chs[0].Notes[0], "cannot parse") {
		t.Errorf("changes %+v", chs)
	}
	left := backupsIn(t, dir)
	if len(left) != 3 || strings.HasSuffix(left[len(left)-1], "-1") {
		t.Errorf("left %v", left)
	}
}
