package feature

import (
	"strings"
	"testing"
)

func TestReleaseForFindsASupportedRelease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, version, want string
	}{
		{"a minor version is its supported patch release", "1.37", "v1.37.2"},
		{"a leading v is allowed", "v1.36", "v1.36.3"},
		{"the supported patch release itself", "v1.37.2", "v1.37.2"},
		{"the patch release without v", "1.36.3", "v1.36.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := ReleaseFor(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if r.Version != tc.want {
				t.Errorf("ReleaseFor(%q) = %s, want %s", tc.version, r.Version, tc.want)
			}
		})
	}
}

func TestReleaseForRefusesAnUnsupportedVersion(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"1.34", "v1.37.1", "", "1", "latest", "1.3"} {
		_, err := ReleaseFor(version)
		if err == nil {
			t.Errorf("ReleaseFor(%q) = nil error, want one", version)
			continue
		}
		for _, r := range Releases() {
			if !strings.Contains(err.Error(), r.Version) {
				t.Errorf("ReleaseFor(%q) = %q, which does not name supported release %s", version, err, r.Version)
			}
		}
	}
}

func TestDefaultIsTheNewestRelease(t *testing.T) {
	t.Parallel()
	if got, want := Default(), Releases()[0].Features; got != want {
		t.Errorf("Default() = %+v, want the newest release's %+v", got, want)
	}
	if Of(nil) != Default() {
		t.Error("Of(nil) is not Default()")
	}
	off := Features{}
	if Of(&off) != off {
		t.Error("Of(&f) is not f")
	}
}

func TestReleasesAreACopy(t *testing.T) {
	t.Parallel()
	rs := Releases()
	rs[0].Features.NodeNamePreFilter = !rs[0].Features.NodeNamePreFilter
	if Releases()[0].Features == rs[0].Features {
		t.Error("changing what Releases returned changed the releases")
	}
}
