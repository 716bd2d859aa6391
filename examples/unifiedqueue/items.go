package main

// The item types of the original system that this example enqueues, with the original's
// payloads. Their kinds, ops, priorities, schemas and idempotency keys come
// from examples/contracts/unified-queue.yaml.

// ContentItem is direct text content (scratchbook, notes, clipboard).
type ContentItem struct {
	Collection string `json:"collection"`
	Content    string `json:"content"`
	SourceType string `json:"source_type,omitempty"`
}

func (ContentItem) Kind() string { return "content" }

// FileItem is one file.
type FileItem struct {
	Collection string `json:"collection"`
	FilePath   string `json:"file_path,omitempty"`
	FileHash   string `json:"file_hash,omitempty"`
}

func (FileItem) Kind() string { return "file" }

// FolderItem is a folder scan.
type FolderItem struct {
	Collection string `json:"collection"`
	FolderPath string `json:"folder_path"`
	Recursive  bool   `json:"recursive"`
}

func (FolderItem) Kind() string { return "folder" }

// LibraryItem is a library's documentation.
type LibraryItem struct {
	Collection     string `json:"collection"`
	LibraryName    string `json:"library_name"`
	LibraryVersion string `json:"library_version"`
}

func (LibraryItem) Kind() string { return "library" }

// DeleteTenantItem removes everything of a tenant.
type DeleteTenantItem struct {
	Collection       string `json:"collection"`
	TenantIDToDelete string `json:"tenant_id_to_delete"`
	Reason           string `json:"reason,omitempty"`
}

func (DeleteTenantItem) Kind() string { return "delete_tenant" }

// RenameItem tracks a rename.
type RenameItem struct {
	Collection string `json:"collection"`
	OldPath    string `json:"old_path"`
	NewPath    string `json:"new_path"`
}

func (RenameItem) Kind() string { return "rename" }

// ImageItem is not an item type of the original: a strict contract refuses it.
type ImageItem struct {
	Collection string `json:"collection"`
}

func (ImageItem) Kind() string { return "image" }
