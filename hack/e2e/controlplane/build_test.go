package controlplane

import "testing"

func TestVersionFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, release, want string
	}{
		{
			name:    "a release stamps its version, major and minor",
			release: "v1.37.2",
			want:    "-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37",
		},
		{
			name:    "a pre-release keeps its suffix in the version only",
			release: "v1.38.0-rc.1",
			want:    "-X k8s.io/component-base/version.gitVersion=v1.38.0-rc.1 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=38",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := versionFlags(tt.release)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("versionFlags(%q)\n got %s\nwant %s", tt.release, got, tt.want)
			}
		})
	}
}

func TestVersionFlagsRefuseWhatIsNoRelease(t *testing.T) {
	t.Parallel()
	for _, release := range []string{"", "1.37.2", "v1.37", "(devel)"} {
		if got, err := versionFlags(release); err == nil {
			t.Errorf("versionFlags(%q) = %q, want an error", release, got)
		}
	}
}
