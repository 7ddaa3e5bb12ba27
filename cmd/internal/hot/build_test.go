package hot

import (
	"os"
	"strings"
	"testing"
)

func TestCheckFront(t *testing.T) {
	own := BuildID("1.2.3")
	if !strings.HasPrefix(own, "1.2.3") {
		t.Fatalf("BuildID(1.2.3) = %q", own)
	}
	if BuildID("1.2.4") == own {
		t.Fatal("two versions have one BuildID")
	}
	for _, tc := range []struct {
		name, front string
		set         bool
		wantErr     string
	}{
		{name: "not handed by a front"},
		{name: "the same build", front: own, set: true},
		{name: "another version", front: BuildID("1.2.4"), set: true, wantErr: "must be installed together"},
		{name: "empty", front: "", set: true, wantErr: "of another build"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.set {
				t.Setenv(FrontBuildEnv, tc.front)
			} else {
				t.Setenv(FrontBuildEnv, "")
				os.Unsetenv(FrontBuildEnv)
			}
			err := CheckFront("1.2.3")
			if tc.wantErr == "" && err != nil {
				t.Errorf("CheckFront: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("CheckFront: %v, want an error saying %q", err, tc.wantErr)
			}
			if _, set := os.LookupEnv(FrontBuildEnv); set {
				t.Errorf("%s is still set: the processes nexus-full starts would inherit it", FrontBuildEnv)
			}
		})
	}
}
