package fwk

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestShortfallFormat(t *testing.T) {
	tests := []struct {
		name     string
		resource v1.ResourceName
		v        int64
		want     string
	}{
		{"cpu below a core is in millicores", v1.ResourceCPU, 250, "250m"},
		{"whole cores are a plain number", v1.ResourceCPU, 4000, "4"},
		{"fractional cores keep their decimals", v1.ResourceCPU, 60100, "60.1"},
		{"a negative cpu amount keeps its sign", v1.ResourceCPU, -1500, "-1.5"},
		{"memory that divides a unit is exact", v1.ResourceMemory, 4 << 30, "4Gi"},
		{"memory that does not divide is rounded to three digits", v1.ResourceMemory, 15896116 << 10, "15.2Gi"},
		{"small fractions keep two decimals", v1.ResourceMemory, 1070 << 20, "1.04Gi"},
		{"hundreds keep no decimals", v1.ResourceMemory, 118424012 << 10, "113Gi"},
		{"bytes below a kibibyte are plain", v1.ResourceMemory, 512, "512"},
		{"ephemeral storage is in binary units", v1.ResourceEphemeralStorage, 10 << 30, "10Gi"},
		{"hugepages are in binary units", "hugepages-2Mi", 2 << 20, "2Mi"},
		{"other resources are counts", "nvidia.com/gpu", 3, "3"},
		{"a rounded amount drops trailing zeros", v1.ResourceMemory, 2560 << 20, "2.5Gi"},
		{"a rounded amount that looks whole keeps one decimal", v1.ResourceMemory, 4<<30 + 1<<20, "4.0Gi"},
		{"zero cpu is zero", v1.ResourceCPU, 0, "0"},
		{"zero memory is zero", v1.ResourceMemory, 0, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Shortfall{Resource: tt.resource}).Format(tt.v); got != tt.want {
				t.Errorf("Format(%d) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
}
