//go:build ignore

// gen.go writes ai_table.go from gs1-syntax-dictionary.txt: go generate ./label/gs1
package main

import (
	"log"
	"os"

	"github.com/labelprinter/go-labelprinter/label/gs1/internal/dictgen"
)

func main() {
	dict, err := os.ReadFile("gs1-syntax-dictionary.txt")
	if err != nil {
		log.Fatal(err)
	}
	src, err := dictgen.Generate(dict)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("ai_table.go", src, 0o644); err != nil {
		log.Fatal(err)
	}
}
