module github.com/goldfhe/goldfhe

go 1.26.8

require (
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/exp v0.0.0-20261014143641-f0251eb4aa3e // indirect
)
